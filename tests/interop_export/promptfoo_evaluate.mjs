// Runs an exported promptfoo config through promptfoo's own evaluate(), offline: the system under test and the
// grader are scripted providers (the grader answers by the test's task and records the prompt it was sent).
// usage: node promptfoo_evaluate.mjs NODE_MODULES CONFIG.yaml '{"a": "<grader reply>", ...}'
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [nodeModules, configPath, repliesJson] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, 'noop.js'));
const yaml = require('js-yaml');
const pf = await import(pathToFileURL(require.resolve('promptfoo')).href);
const replies = JSON.parse(repliesJson);
const config = yaml.load(fs.readFileSync(configPath, 'utf8'));
const seen = [];
config.defaultTest.options.provider = {
  id: () => 'scripted-grader',
  callApi: async (prompt) => {
    seen.push(prompt);
    const task = Object.keys(replies).find((t) => prompt.includes(`Fix bug ${t}`));
    return { output: replies[task] };
  },
};
const suite = {
  ...config,
  providers: [{ id: () => 'scripted-system', callApi: async (prompt) => ({ output: `patched (${prompt})` }) }],
  tests: Object.keys(replies).map((t) => ({ vars: { task: `Fix bug ${t}` } })),
};
const record = await pf.default.evaluate(suite, { maxConcurrency: 1, cache: false, writeLatestResults: false });
const summary = await record.toEvaluateSummary();
const rows = summary.results.map((r) => ({
  task: r.vars.task,
  success: r.success,
  score: r.score,
  components: (r.gradingResult?.componentResults || []).map((c) => ({ pass: c.pass, score: c.score, reason: c.reason })),
  metadata: r.testCase?.metadata,
}));
console.log(JSON.stringify({ rows, seen }));
