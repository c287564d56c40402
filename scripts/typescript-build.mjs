// A TypeScript build that stays in its process between builds, as `tsc --watch` does, for
// `npm run dev`: it keeps the last program, so a rebuild reads every file but parses only those
// whose text changed, and checks and emits only what the change can affect. A `tsc -p` per change
// loaded TypeScript, parsed the whole project and its libraries, and read its build info again.
// tests/scripts/typescript-build.test.ts compares it with tsc.
import ts from 'typescript';

/**
 * A builder for the project `configFile` (a tsconfig.json) whose diagnostics name files relative to
 * `root`, as `tsc` run there prints them. `build()` compiles what changed since its last call (all
 * of it the first time) and returns tsc's exit status and what tsc would print: 0 and '' for a
 * clean build. With `noEmitOnError`, a build with errors emits nothing; what it should have emitted is
 * emitted by the next build that has none.
 */
export function incrementalBuilder(configFile, root) {
  /** The source files of the last build, by name and language version, with the text each was parsed from. */
  let parsed = new Map();
  let last;
  const format = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => ts.sys.newLine,
  };

  return function build() {
    const configDiagnostics = [];
    const config = ts.getParsedCommandLineOfConfigFile(configFile, undefined, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => configDiagnostics.push(diagnostic),
    });
    if (config === undefined) return { status: 1, output: ts.formatDiagnostics(configDiagnostics, format) };
    const host = ts.createIncrementalCompilerHost(config.options);
    const parse = host.getSourceFile;
    // What this build reads; a file it no longer reads (removed, or no longer imported) is not kept.
    const kept = parsed;
    parsed = new Map();
    host.getSourceFile = (fileName, languageVersion, onError, shouldCreateNewSourceFile) => {
      const text = host.readFile(fileName);
      // A file is parsed for a language version (and, for modules, a format): a changed tsconfig parses it again.
      const key = `${fileName}\0${typeof languageVersion === 'object' ? `${languageVersion.languageVersion}:${languageVersion.impliedNodeFormat}` : languageVersion}`;
      const earlier = kept.get(key);
      const file =
        earlier !== undefined && earlier.text === text && !shouldCreateNewSourceFile
          ? earlier.file
          : parse(fileName, languageVersion, onError, shouldCreateNewSourceFile);
      if (file !== undefined) parsed.set(key, { text, file });
      return file;
    };
    const program = ts.createEmitAndSemanticDiagnosticsBuilderProgram(
      config.fileNames,
      config.options,
      host,
      last,
      ts.getConfigFileParsingDiagnostics(config),
    );
    last = program;
    // What tsc reports, in its order: the configuration; then syntax; then, with no syntax error,
    // the options and global errors; then, with none of those either, the types; then the emit's.
    const diagnostics = [...program.getConfigFileParsingDiagnostics()];
    const fromConfig = diagnostics.length;
    diagnostics.push(...program.getSyntacticDiagnostics());
    if (diagnostics.length === fromConfig) {
      diagnostics.push(...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
      if (diagnostics.length === fromConfig) diagnostics.push(...program.getSemanticDiagnostics());
    }
    const emitted = program.emit();
    diagnostics.push(...emitted.diagnostics);
    const errors = diagnostics.some((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
    // tsc's exit status: errors with nothing emitted (noEmitOnError) is 1, errors with output is 2.
    const status = !errors ? 0 : emitted.emitSkipped ? 1 : 2;
    return { status, output: ts.formatDiagnostics(ts.sortAndDeduplicateDiagnostics(diagnostics), format) };
  };
}
