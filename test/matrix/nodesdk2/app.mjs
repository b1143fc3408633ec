// Zero-code start: run as `node --import loopwatch/register app.mjs`. No loopwatch setup here.
import * as api from '@opentelemetry/api';
import { registeredProcessor, ToolLoopError } from 'loopwatch';
import { runAgent } from '../shared/agent-app.cjs';

process.stdout.write(JSON.stringify(runAgent({ api, registeredProcessor, ToolLoopError })) + '\n');
