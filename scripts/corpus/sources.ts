/**
 * The real-run corpus: which public repositories, which files, converted how. `npm run
 * corpus:extract` reads these from the fetched snapshots into gitignored originals;
 * `npm run corpus:build` pseudonymizes them into `test/fixtures/real/`.
 */

export type SourceFormat = 'swe-agent' | 'tau2' | 'toolathlon' | 'toolathlon-log' | 'livemcp' | 'bfcl' | 'terminal-bench-mini' | 'openhands' | 'tau-bench';

export interface SourceSpec {
  /** Corpus id: file names, table rows, label files. */
  readonly id: string;
  readonly title: string;
  /** `owner/name` of the public repository holding the files. */
  readonly repo: string;
  readonly licence: string;
  /** Where the runs come from, when the repository redistributes them. */
  readonly origin: string;
  readonly format: SourceFormat;
  /** Paths (anywhere in the repository's history) of the files to read. */
  readonly paths: RegExp;
  /** Read only the newest commit's files: a file its authors corrected replaces its earlier version. */
  readonly newestOnly?: true;
  readonly agent: string;
  /** Name each run's agent as its file does (the τ² leaderboard's submissions ran different agents). */
  readonly agentFromFile?: true;
  /** Files that name no model (SWE-agent, LiveMCPBench, Terminal-Bench recordings). */
  readonly model?: string;
  /** Synthetic start of the first run (sources without timestamps). */
  readonly base?: string;
  /**
   * Keeps the corpus small: every run whose outcome matches `always` (limits hit: where loops
   * are) and every run whose id matches `alwaysRuns` (tasks chosen by name before any run was
   * read), and of the others the `others` runs first by a hash of their id (an unbiased sample).
   */
  readonly sample?: { readonly always: RegExp; readonly others: number; readonly alwaysRuns?: RegExp };
  /**
   * A fresh draw from the runs of an earlier source of the same repository: the runs that
   * source's sample keeps are left out before this one's sample is drawn, so its `others` are the
   * next ones in the same hash order (runs nobody has read).
   */
  readonly drawnAfter?: string;
  /**
   * A third of the runs (by hash of the run id: `scripts/eval/split.ts`) is a held-out test split
   * that no rule change looks at. Every source added from issue 27 on has one.
   */
  readonly heldOut?: true;
}

/** Toolathlon's published trajectories: `toolathlon` and a later draw of the same runs share this. */
const TOOLATHLON: SourceSpec = {
  id: 'toolathlon',
  title: 'Toolathlon: Claude 4.5 Sonnet and DeepSeek-V3.2-Exp driving real MCP servers (Notion, GitHub, Canvas, Sheets, BigQuery, Playwright, terminal, ...)',
  repo: 'WaitHZ/toolathlon-traj-website',
  licence: 'none stated in the repository; the runs are the Toolathlon authors\' published trajectories (the benchmark\'s replay site, by one of its authors), published for viewing',
  origin: 'trajs/ of the Toolathlon trajectory replay site (the same runs as the authors\' Toolathlon-Trajectories release)',
  format: 'toolathlon',
  paths: /^trajs\/[^/]+_[^/]+\.json$/,
  newestOnly: true,
  agent: 'toolathlon',
  base: '2025-10-21T00:00:00Z',
  sample: { always: /^(?!pass$|fail$)/, others: 60 },
  heldOut: true,
};

/** mini-swe-agent's Terminal-Bench leaderboard submission: `tbench-mini-claude4` and a later draw of its trials share this. */
const TBENCH_MINI_CLAUDE4: SourceSpec = {
  id: 'tbench-mini-claude4',
  title: 'mini-swe-agent (the mini command line, one bash tool with return codes) + Claude Sonnet 4 on Terminal-Bench core 0.1.1, five runs of the task set (runs ended by the harness time limit included)',
  repo: 'laude-institute/terminal-bench-leaderboard',
  licence: 'none stated in the repository; the Terminal-Bench maintainers publish these leaderboard logs for inspection (Terminal-Bench itself is Apache-2.0)',
  origin: 'results/terminal-bench-core@0.1.1/20250825_swe-agent-mini_claude-4-sonnet (terminal recordings and results.json per trial)',
  format: 'terminal-bench-mini',
  paths: /^results\/terminal-bench-core@0\.1\.1\/20250825_swe-agent-mini_claude-4-sonnet\/.+\/(?:sessions\/agent\.cast|results\.json)$/,
  agent: 'mini-swe-agent',
  model: 'claude-sonnet-4-20250514',
  sample: { always: /^(?!submitted$)/, others: 130 },
  heldOut: true,
};

/** SWE-agent-LM-32B's SWE-bench leaderboard submission: `swe-agent-lm32b` and a later draw of its runs share this. */
const SWE_AGENT_LM32B: SourceSpec = {
  id: 'swe-agent-lm32b',
  title: 'SWE-agent 1.0 + SWE-agent-LM-32B on SWE-bench Verified (bash, str_replace_editor, submit)',
  repo: 'lgetter/swe-agent-trajectory-analysis',
  licence: 'none stated in the redistributing repository; the runs are the SWE-bench leaderboard submission 20250511_sweagent_lm_32b (SWE-bench/experiments), published for analysis',
  origin: 'SWE-bench/experiments evaluation/verified/20250511_sweagent_lm_32b (trajs)',
  format: 'swe-agent',
  paths: /^20250511_sweagent_lm_32b\/trajs\/[^/]+\/[^/]+\.traj$/,
  agent: 'swe-agent',
  model: 'SWE-agent-LM-32B',
  base: '2025-05-11T00:00:00Z',
  sample: { always: /^(?!submitted$)/, others: 86 },
};

/** SWE-agent 1.1 + Claude Sonnet 4's SWE-bench leaderboard submission: `swe-agent-claude4` and a later draw of its runs share this. */
const SWE_AGENT_CLAUDE4: SourceSpec = {
  id: 'swe-agent-claude4',
  title: 'SWE-agent 1.1 + Claude Sonnet 4 on SWE-bench Verified (bash, str_replace_editor, submit)',
  repo: 'lgetter/swe-agent-trajectory-analysis',
  licence: 'none stated in the redistributing repository; the runs are the SWE-bench leaderboard submission 20250522_sweagent_claude-4-sonnet-20250514 (SWE-bench/experiments)',
  origin: 'SWE-bench/experiments evaluation/verified/20250522_sweagent_claude-4-sonnet-20250514 (trajs)',
  format: 'swe-agent',
  paths: /^20250522_sweagent_claude-4-sonnet-20250514\/trajs\/[^/]+\/[^/]+\.traj$/,
  agent: 'swe-agent',
  model: 'claude-sonnet-4-20250514',
  base: '2025-05-22T00:00:00Z',
  sample: { always: /^(?!submitted$)/, others: 24 },
};

/** The Multi-SWE-bench team's OpenHands + Claude 3.5 Sonnet (Oct) evaluation: `openhands-claude35` and a later draw of its runs share this. */
const OPENHANDS_CLAUDE35: SourceSpec = {
  id: 'openhands-claude35',
  title: 'OpenHands CodeActAgent (MopenHands, execute_bash with exit codes, str_replace_editor) + Claude 3.5 Sonnet (Oct) on SWE-bench Verified, 50-iteration limit (runs that reached it included)',
  repo: 'gsmoon97/swe-agent-eval',
  licence: 'none stated in the redistributing repository; the runs are the Multi-SWE-bench team\'s evaluation 20250329_OpenHands_Claude-3.5-Sonnet(Oct) of SWE-bench Verified (multi-swe-bench/experiments), published for inspection',
  origin: 'multi-swe-bench/experiments evaluation/python/verified/20250329_OpenHands_Claude-3.5-Sonnet(Oct) (trajs: the completion log of each run\'s last model call)',
  format: 'openhands',
  paths: /^evaluation\/python\/verified\/20250329_OpenHands_Claude-3\.5-Sonnet\(Oct\)\/trajs\/[^/]+\/[^/]+\.json$/,
  agent: 'openhands-codeact',
  model: 'Claude-3.5-Sonnet(Oct)',
  base: '2025-03-29T00:00:00Z',
  // 211 of the 500 runs reached the iteration limit: too many to keep all, so the sample is the
  // first runs by hash of all 500, limits hit among them as they come
  sample: { always: /(?!)/, others: 52 },
  heldOut: true,
};

export const SOURCES: readonly SourceSpec[] = [
  SWE_AGENT_LM32B,
  SWE_AGENT_CLAUDE4,
  {
    id: 'tau2-orchestrator',
    title: 'τ²-bench leaderboard: ToolOrchestra (Nemotron-Orchestrator-8B) airline and retail, 1 trial',
    repo: 'WhissleAI/tau2-bench-w',
    licence: 'MIT (tau2-bench, Sierra Research)',
    origin: 'tau2-bench leaderboard submission toolorchestra_nvidia_2025-12-02',
    format: 'tau2',
    paths: /^web\/leaderboard\/public\/submissions\/toolorchestra_nvidia_2025-12-02\/trajectories\/toolorchestra_(airline|retail)_gpt-5_1trial\.json$/,
    agent: 'toolorchestra',
  },
  {
    id: 'tau2-gemma-domains',
    title: 'τ²-bench harness, Gemma 3 27B agent (Gemma 3 12B user) on 19 student-built support domains',
    repo: 'oscaralvaro/tau2-bench',
    licence: 'MIT (repository LICENSE)',
    origin: 'data/simulations of the repository (runs by its contributors)',
    format: 'tau2',
    paths: /^data\/simulations\/[^/]+\.json$/,
    agent: 'tau2-llm-agent',
  },
  {
    id: 'tau2-whissle',
    title: 'τ²-bench airline (Whissle voice-agent stack) and retail (GPT-4.1) runs',
    repo: 'WhissleAI/tau2-bench-w',
    licence: 'MIT (repository LICENSE)',
    origin: 'results/whissle of the repository',
    format: 'tau2',
    paths: /^results\/whissle\/(airline_run1|hd_retail_n5)\.json$/,
    agent: 'tau2-llm-agent',
  },
  {
    id: 'tau2-activegraph',
    title: 'τ²-bench retail/airline, GPT-4.1-mini agent under an activegraph runtime (runs that hit max_steps)',
    repo: 'yoheinakajima/activegraph-tau2-bench',
    licence: 'Apache-2.0 (repository LICENSE)',
    origin: 'runs/*/tau2_artifacts/results.json of the repository',
    format: 'tau2',
    paths: /^runs\/[^/]+\/tau2_artifacts\/results\.json$/,
    agent: 'tau2-llm-agent',
  },
  TOOLATHLON,
  {
    id: 'livemcp-copilot',
    title: 'LiveMCPBench: MCP Copilot Agent (Claude Sonnet 4) over 70 MCP servers through one generic execute-tool',
    repo: 'icip-cas/LiveMCPBench',
    licence: 'Apache-2.0 (repository LICENSE)',
    origin: 'baseline/output of the repository (the authors\' baseline run)',
    format: 'livemcp',
    paths: /^baseline\/output\/claude-sonnet-4-20250514_Qwen3-Embedding-0\.6B\.json$/,
    agent: 'mcp-copilot',
    model: 'claude-sonnet-4-20250514',
    base: '2025-07-22T00:00:00Z',
    heldOut: true,
  },
  {
    id: 'bfcl-memory-qwen3',
    title: 'BFCL v4 agentic memory, prerequisite conversations (several user turns each): Qwen3-8B and Qwen3-4B-Instruct-2507 in prompt mode under vLLM, key-value, vector and recursive-summary memory tools',
    repo: 'vgangal101/gorilla_bfcl',
    licence: 'Apache-2.0 (repository LICENSE, a fork of ShishirPatil/gorilla)',
    origin: 'berkeley-function-call-leaderboard/results/*/agentic/memory/*/BFCL_v4_memory_*_prereq_result.json of the repository (its own runs)',
    format: 'bfcl',
    paths: /^berkeley-function-call-leaderboard\/results\/[^/]+\/agentic\/memory\/[^/]+\/BFCL_v4_memory_[a-z_]+_prereq_result\.json$/,
    agent: 'bfcl-prompt-handler',
    base: '2026-05-06T00:00:00Z',
    heldOut: true,
  },
  TBENCH_MINI_CLAUDE4,
  {
    ...TOOLATHLON,
    id: 'toolathlon-2',
    title: 'Toolathlon, a fresh draw: Claude 4.5 Sonnet and DeepSeek-V3.2-Exp driving real MCP servers, the next 60 runs by hash after those of toolathlon',
    drawnAfter: 'toolathlon',
  },
  {
    ...TBENCH_MINI_CLAUDE4,
    id: 'tbench-mini-claude4-2',
    title: 'mini-swe-agent + Claude Sonnet 4 on Terminal-Bench core 0.1.1, a fresh draw: every trial where the agent ran that tbench-mini-claude4 did not take',
    drawnAfter: 'tbench-mini-claude4',
  },
  {
    ...TOOLATHLON,
    id: 'toolathlon-3',
    title: 'Toolathlon, the rest: Claude 4.5 Sonnet and DeepSeek-V3.2-Exp driving real MCP servers, every run neither toolathlon nor toolathlon-2 took',
    // over the size budget whole (1.75 MB): every task that waits on infrastructure, the rest by hash
    sample: { always: /^(?!pass$|fail$)/, others: 82, alwaysRuns: /\/(?:.*-)?(?:k8s|kube|kubernetes|helm|deploy|docker|container|ci|cluster|rollout|pipeline|monitor|timeout)(?:-|$)/ },
    drawnAfter: 'toolathlon-2',
  },
  {
    id: 'toolathlon-early',
    title: 'Toolathlon while it was built: Claude 4 Sonnet and GPT-4.1-mini runs its authors recorded in the benchmark\'s repository (MCP servers, a terminal, local Python), June to September 2025',
    repo: 'Klavis-AI/Toolathlon',
    licence: 'none stated in the repository; the runs are the Toolathlon authors\' own recordings, committed with the benchmark\'s code and later removed from its tree (they remain in its history)',
    origin: 'recorded_trajectories_v2/run1/<model>/<task group>/<task>/log.json in the history of the repository',
    format: 'toolathlon-log',
    paths: /^recorded_trajectories_v2\/run1\/[^/]+\/[^/]+\/[^/]+\/log\.json$/,
    agent: 'toolathlon',
    base: '2025-06-30T00:00:00Z',
    heldOut: true,
  },
  {
    id: 'tau2-leaderboard',
    title: 'τ²-bench leaderboard submissions nobody had taken: a LangChain agent on gpt-oss-120b (runs ended by max_steps and too many errors included), Claude Opus 4.6 under three submitters\' agents (airline, medical triage), GPT-5.4, o3, Grok 3, Claude Sonnet 4.6 and DeepSeek-chat under IronShell\'s agents, and the harness\'s own GPT-4o telecom results',
    repo: 'sierra-research/tau2-bench',
    licence: 'MIT (repository LICENSE, Sierra Research)',
    origin: 'web/leaderboard/public/submissions/*/trajectories/*.json and data/simulations of the repository, in its history (the submitters\' own runs)',
    format: 'tau2',
    // not taken: ToolOrchestra (in tau2-orchestrator), Claude Sonnet 4.5 airline (kept apart), and
    // IronShell's list-form copy of the adaptive agent's runs (a resubmission of the community file's)
    paths: /^(?:web\/leaderboard\/public\/submissions\/(?!toolorchestra_|claude-sonnet-4-5_|adaptive-agent_ironshell-ui_)[^/]+\/trajectories\/[^/]+\.json|data\/simulations\/2025-08-10T02:44:06\.496849_telecom_llm_agent_gpt-4o_user_simulator_gpt-4o\.json)$/,
    agent: 'tau2-agent',
    agentFromFile: true,
    heldOut: true,
  },
  OPENHANDS_CLAUDE35,
  {
    ...OPENHANDS_CLAUDE35,
    id: 'openhands-claude35-2',
    title: 'OpenHands CodeActAgent + Claude 3.5 Sonnet (Oct) on SWE-bench Verified, a fresh draw (session 6): the next 52 runs by hash after those of openhands-claude35 (runs that reached the 50-iteration limit included)',
    drawnAfter: 'openhands-claude35',
  },
  {
    ...SWE_AGENT_LM32B,
    id: 'swe-agent-lm32b-2',
    title: 'SWE-agent 1.0 + SWE-agent-LM-32B on SWE-bench Verified, a fresh draw (session 6): the next 85 submitted runs by hash after those of swe-agent-lm32b',
    // every run that hit a limit is in swe-agent-lm32b; of the 204 submitted runs it left, the next 85 in its hash order (~1.2 MB)
    sample: { always: /^(?!submitted$)/, others: 85 },
    drawnAfter: 'swe-agent-lm32b',
    heldOut: true,
  },
  {
    ...SWE_AGENT_CLAUDE4,
    id: 'swe-agent-claude4-2',
    title: 'SWE-agent 1.1 + Claude Sonnet 4 on SWE-bench Verified, a fresh draw (session 6): every run of the snapshot that swe-agent-claude4 did not take',
    // all of them: 39 runs, about 0.6 MB
    sample: { always: /^(?!submitted$)/, others: 1000 },
    drawnAfter: 'swe-agent-claude4',
    heldOut: true,
  },
  {
    id: 'tau-bench-agentverify',
    title: 'τ-bench retail with its LLM user simulator: the original tool-calling agent and the AgentVerify variants (preconditions given as advice, with Python code generation, pre- and postcondition assertions checked around each write), one unnamed OpenAI model',
    repo: 'avaljotsingh/tau-bench',
    licence: 'MIT (repository LICENSE, Sierra\'s tau-bench)',
    origin: 'final_results/*.json of the repository (the AgentVerify authors\' own runs; the files name the model none)',
    format: 'tau-bench',
    paths: /^final_results\/(?:assertions-agent|tool-calling)[^/]*\.json$/,
    agent: 'tool-calling',
    agentFromFile: true,
    model: 'unnamed (an OpenAI model behind the authors\' endpoint; the files say none)',
    base: '2025-06-18T00:00:00Z',
    heldOut: true,
  },
];

export function sourceById(id: string): SourceSpec {
  const s = SOURCES.find((x) => x.id === id);
  if (!s) throw new Error(`unknown corpus source "${id}" (known: ${SOURCES.map((x) => x.id).join(', ')})`);
  return s;
}
