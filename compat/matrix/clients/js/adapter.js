'use strict';
// The matrix's adapter protocol for the JavaScript clients
// (clients/README.md): run({version, produce, consume, group, metadata}),
// each an async function of the settings (the first line of input).

const readline = require('node:readline');

class NotSupported extends Error {}

function emit(type, fields = {}) {
  process.stdout.write(JSON.stringify({ ...fields, type }) + '\n');
}

function error(name, message = '', connection = false, protocol = false) {
  return { name, message, connection, protocol };
}

const connectionWords = ['connection', 'disconnected', 'broken pipe', 'econnrefused', 'econnreset', 'epipe', 'transport', 'not connected', 'socket'];

function isConnectionText(text) {
  const t = text.toLowerCase();
  return connectionWords.some((w) => t.includes(w));
}

// isSecure says whether the settings ask for a secured listener
// (SASL_SSL) instead of PLAINTEXT: securityProtocol, saslMechanism,
// saslUsername, saslPassword and sslCaFile say how.
function isSecure(cfg) {
  return (cfg.securityProtocol || 'PLAINTEXT') !== 'PLAINTEXT';
}

// input reads the first line (the settings), then hands the rest on: as an
// async iterator of lines (lines()) and as a promise of the end of input
// (closed), which tells a consumer to stop; take() gets what is already
// buffered.
function input() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  const queue = [];
  let wake = null;
  let ended = false;
  let endedResolve;
  const closed = new Promise((resolve) => { endedResolve = resolve; });
  rl.on('line', (line) => {
    queue.push(line);
    if (wake) { wake(); wake = null; }
  });
  rl.on('close', () => {
    ended = true;
    endedResolve();
    if (wake) { wake(); wake = null; }
  });
  async function next() {
    while (queue.length === 0 && !ended) {
      await new Promise((resolve) => { wake = resolve; });
    }
    return queue.length > 0 ? queue.shift() : null;
  }
  // take returns up to max lines already read, without waiting.
  function take(max) {
    return queue.splice(0, max);
  }
  return { next, take, closed };
}

async function run(ops) {
  const op = process.argv[2];
  if (!ops[op]) {
    emit('fatal', { error: error('usage', `unknown operation ${op}`) });
    process.exit(2);
  }
  const inp = input();
  let cfg = {};
  if (op !== 'version') {
    cfg = JSON.parse(await inp.next());
  }
  try {
    await ops[op](cfg, inp);
  } catch (e) {
    if (e instanceof NotSupported) {
      emit('notSupported', { reason: e.message });
    } else {
      emit('fatal', { error: error(e.name || 'Error', e.message || String(e), isConnectionText(`${e.name} ${e.message}`)) });
    }
  }
  // Clients keep timers and sockets open after disconnecting: the
  // operation is over, so is the process.
  process.stdout.write('', () => process.exit(0));
}

module.exports = { NotSupported, emit, error, isConnectionText, isSecure, run };
