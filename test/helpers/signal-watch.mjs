// Preloaded into a `serve` child (NODE_OPTIONS=--import): writes a line to stderr whenever a signal the
// process listens for loses its last listener, even for a moment. Node then stops watching it and the
// signal's default action (death, for SIGINT, SIGTERM and SIGHUP) applies until a listener is back.
const signals = new Set(['SIGINT', 'SIGTERM', 'SIGHUP']);
const watched = new Set();
process.on('newListener', (name) => {
  if (signals.has(name)) watched.add(name);
});
process.on('removeListener', (name) => {
  if (watched.has(name) && process.listenerCount(name) === 0) process.stderr.write(`signal watch dropped: ${name}\n`);
});
