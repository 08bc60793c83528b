/** The oasdiff equivalents of our rules live beside the engine (./oasdiff-equivalents.ts): the finding model reads them too. */
export { attachOasdiff, OASDIFF_EQUIVALENTS } from '../oasdiff-equivalents';
