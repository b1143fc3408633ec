// An app that starts its own NodeSDK in code (traces exported as the OTEL_* variables say), run
// as `LOOPWATCH_REGISTER=attach node --import loopwatch/register app-own-sdk.mjs`.
import * as api from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { registeredProcessor, ToolLoopError } from 'loopwatch';
import { runAgent } from '../shared/agent-app.cjs';

const sdk = new NodeSDK();
sdk.start();
const result = runAgent({ api, registeredProcessor, ToolLoopError });
await sdk.shutdown();
process.stdout.write(JSON.stringify(result) + '\n');
