// The parts of CodeMirror 6 the explorer's editor uses, as the global `CM`.
export { EditorState, Compartment } from "@codemirror/state";
export { EditorView, keymap, placeholder, lineNumbers, highlightActiveLine,
         drawSelection } from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { syntaxHighlighting, defaultHighlightStyle, bracketMatching,
         indentOnInput } from "@codemirror/language";
export { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap,
         completeFromList, startCompletion } from "@codemirror/autocomplete";
export { sql, StandardSQL, PostgreSQL, schemaCompletionSource,
         keywordCompletionSource } from "@codemirror/lang-sql";
