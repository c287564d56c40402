import { keptByText } from '../src/kept';

// Values made once for each text, the newest texts kept: what the key check's parses, webhook
// signing keys and webhook bodies are kept in.
describe('keptByText', () => {
  test('a value is made once for each text while it is kept, and the first made is let go past the bound', () => {
    const made: string[] = [];
    const kept = keptByText<string>(2);
    const get = (text: string) =>
      kept(text, (asked) => {
        made.push(asked);
        return asked.toUpperCase();
      });

    expect([get('a'), get('b'), get('a'), get('b')]).toEqual(['A', 'B', 'A', 'B']);
    expect(made).toEqual(['a', 'b']);
    // A third text lets the first made go: the newest two are kept.
    expect(get('c')).toBe('C');
    expect([get('b'), get('c')]).toEqual(['B', 'C']);
    expect(made).toEqual(['a', 'b', 'c']);
    expect(get('a')).toBe('A');
    expect(made).toEqual(['a', 'b', 'c', 'a']);
  });
});
