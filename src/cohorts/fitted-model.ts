import fitted from './weights.json';
import { AFFINITY_FEATURES } from './affinity';
import type { AffinityModel } from './types';

/**
 * The fitted affinity model (weights.json beside it, written by `node bench/run.js fit-cohorts --write` from the corpus's dumps;
 * method and leave-repository-out figures in docs/cohorts.md). Versioned: its version is part of REVIEW_ENGINE_VERSION
 * when the engine forms cohorts with it. `adopted` is the fit's verdict: the model beat the rule engine in
 * leave-repository-out cross-validation; otherwise formation keeps the rules and the model is only measured.
 */
export interface WeightsFile extends AffinityModel {
  date: string;
  trainedOn: string[];
  cases: number;
  adopted: boolean;
}

export const WEIGHTS: WeightsFile = fitted as WeightsFile;

/** A model fitted with another feature list cannot be read against this engine's features. */
export function checkModel(model: AffinityModel): AffinityModel {
  if (model.features.join(',') !== AFFINITY_FEATURES.join(',') || model.weights.length !== AFFINITY_FEATURES.length) {
    throw new Error(`affinity model ${model.version} was fitted with features [${model.features.join(', ')}], the engine has [${AFFINITY_FEATURES.join(', ')}]: refit (bench/fit-cohorts.ts)`);
  }
  return model;
}

/** The model formation uses by default: the fitted one when adopted, else none (the rule engine). */
export const DEFAULT_AFFINITY_MODEL: AffinityModel | undefined = WEIGHTS.adopted ? checkModel(WEIGHTS) : undefined;
