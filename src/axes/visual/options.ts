/**
 * How two images are compared. Every setting is a pixelmatch option, fixed here so that a recompute of
 * the same pair always reaches the same verdict:
 * - `threshold: 0.1` (pixelmatch's default): the YIQ colour distance, 0..1, above which a pixel differs.
 *   It absorbs sub-perceptual noise (re-dithered gradients, GPU rounding) but not a one-step colour
 *   change of a UI element.
 * - `includeAA: false`: pixels pixelmatch recognises as anti-aliasing (a pixel between a darker and a
 *   brighter neighbour, each with 3+ identical siblings) are drawn yellow and not counted, so text that
 *   re-rasterises by a sub-pixel does not hold the gate.
 * - `alpha: 0.1`: the base image is drawn faded to 10 % in the diff image, so the red pixels stand out.
 * - `checkerboard: false`: semi-transparent pixels are blended against white. Pixelmatch's checkerboard
 *   depends on the absolute byte offset of a pixel; blending against white makes the comparison of a
 *   pixel independent of its position, which is what lets us compare only the bands of rows that
 *   differ (see `compareDecoded`) and get exactly the result of comparing the whole image.
 *
 * In a module of its own (no imports), so that the CLI's help can quote it without loading the engine.
 */
export const VISUAL_DIFF_OPTIONS = Object.freeze({ threshold: 0.1, includeAA: false, alpha: 0.1, checkerboard: false });
