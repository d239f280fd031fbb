// Runs a CloudFront Function (cloudfront-js-2.0) locally, for tests.
//
//   node cf_function_harness.mjs <function.js>  < {"kvs": {key: value}, "events": [event, ...]}
//
// Prints a JSON array with one entry per event: what handler returned, or {"error": message}
// if it threw. The function runs in a bare vm context (no require, process or Buffer), so
// code that leans on Node rather than the CloudFront runtime fails here too.
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const IMPORT = "import cf from 'cloudfront';";

function load(path, store) {
    const source = readFileSync(path, 'utf8');
    const lines = source.split('\n');
    if (lines[0].trim() !== IMPORT) {
        throw new Error(`${path} must start with: ${IMPORT}`);
    }
    // The fake KVS answers like the real one: the value as a string, or a rejection.
    const cf = {
        kvs: () => ({
            get: async (key) => {
                if (!Object.prototype.hasOwnProperty.call(store, key)) {
                    throw new Error('KeyNotFound');
                }
                return store[key];
            },
        }),
    };
    const context = vm.createContext({ cf });
    // Keep line numbers in stack traces: blank out the import instead of deleting it.
    vm.runInContext(['', ...lines.slice(1)].join('\n'), context, { filename: path });
    if (typeof context.handler !== 'function') {
        throw new Error(`${path} defines no handler(event)`);
    }
    return context.handler;
}

const [path] = process.argv.slice(2);
if (!path) {
    process.stderr.write('usage: node cf_function_harness.mjs <function.js> < input.json\n');
    process.exit(2);
}
const input = JSON.parse(readFileSync(0, 'utf8'));
const handler = load(path, input.kvs ?? {});
const results = [];
for (const event of input.events) {
    try {
        results.push(await handler(event));
    } catch (e) {
        results.push({ error: String(e && e.stack ? e.stack : e) });
    }
}
process.stdout.write(JSON.stringify(results));
