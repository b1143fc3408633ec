/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- this file is a CommonJS consumer on purpose */
// Zero-code start: run as `node --require loopwatch/register app.cjs`. No loopwatch setup here.
const api = require('@opentelemetry/api');
const { registeredProcessor, ToolLoopError } = require('loopwatch');
const { runAgent } = require('../shared/agent-app.cjs');

process.stdout.write(JSON.stringify(runAgent({ api, registeredProcessor, ToolLoopError })) + '\n');
