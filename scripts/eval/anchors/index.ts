import { cline } from './cline.js';
import type { Anchor } from './common.js';
import { deerFlow } from './deer-flow.js';
import { geminiCli } from './gemini-cli.js';
import { openClaw } from './openclaw.js';
import { openHands } from './openhands.js';
import { selectools } from './selectools.js';
import { toolLoopGuard } from './tool-loop-guard.js';

export type { Anchor, AnchorVerdict } from './common.js';

/** The anchors' simple detectors, reimplemented from their sources' rules (research/anchors-detectors.md). */
export const ANCHORS: readonly Anchor[] = [cline, geminiCli, openHands, openClaw, deerFlow, selectools, toolLoopGuard];
