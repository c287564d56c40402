// The order jest starts the test files in. Jest runs first the files that took longest last time,
// from its cache; a fresh checkout (every CI run) has none, and jest falls back to the largest
// files first. The suites that take longest are not the largest: they start processes (project
// copies that build and serve, CLI runs, servers killed and restarted), and one of them started
// last kept a core idle while it ran alone. Without timings, those folders' files go first.
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

/** The folders whose suites start processes, heaviest first. */
const FIRST = ['scripts', 'reliability', 'cli'].map((folder) => path.join(__dirname, folder) + path.sep);

const rank = (test) => {
  const at = FIRST.findIndex((folder) => test.path.startsWith(folder));
  return at === -1 ? FIRST.length : at;
};

class ProcessesFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    // With timings from an earlier run, jest's own order puts the long ones first.
    if (sorted.some((test) => test.duration != null)) return sorted;
    return sorted
      .map((test, index) => ({ test, index }))
      .sort((a, b) => rank(a.test) - rank(b.test) || a.index - b.index)
      .map(({ test }) => test);
  }
}

module.exports = ProcessesFirst;
