import { SingleBar } from 'cli-progress';
import type { ImportInput, ImportProgress } from './program';

/**
 * A progress bar on stderr for an import: by bytes read when the input is a file of known size,
 * else a running count of records.
 */
export function importProgressBar(input: ImportInput): ImportProgress {
  const total = input.totalBytes;
  const bar = new SingleBar({
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: true,
    format: total ? 'importing [{bar}] {percentage}% | {records} records' : 'importing {records} records',
  });
  bar.start(total ?? 0, 0, { records: 0 });
  return {
    update: (records) => bar.update(total ? bytesRead(input.stream) : 0, { records }),
    stop: () => bar.stop(),
  };
}

/** How much of the file a stream has read; 0 for a stream that does not count (stdin). */
function bytesRead(stream: object): number {
  return 'bytesRead' in stream && typeof stream.bytesRead === 'number' ? stream.bytesRead : 0;
}
