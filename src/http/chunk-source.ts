/** Items read in chunks from a snapshot that must be closed; the store's OrderSnapshot is one. */
export interface ChunkSource<T> {
  read(max: number): Promise<T[]>;
  /** Whether every item has been read, for a source that knows without reading on. */
  exhausted?(): boolean;
  close(): Promise<void>;
}

/** The same chunks, each item mapped: what a version of the API shows of the store's items. */
export function mapChunks<T, U>(source: ChunkSource<T>, map: (item: T) => U): ChunkSource<U> {
  return {
    read: async (max) => (await source.read(max)).map(map),
    ...(source.exhausted === undefined ? {} : { exhausted: source.exhausted.bind(source) }),
    close: () => source.close(),
  };
}
