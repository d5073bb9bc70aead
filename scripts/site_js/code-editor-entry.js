/*
 * The code editor of the site's code exercises: CodeMirror 6, bundled at build time.
 *
 * scripts/vendor_js.py bundles this file with esbuild (both pinned in package-lock.json)
 * into _lib/codemirror/code-editor.js, which defines window.GLCodeEditor. exercises.js
 * turns each code exercise's <textarea data-answer> into an editor with it; where the
 * bundle cannot load, the textarea stays and works as a plain editor.
 *
 * Accessibility: the editable element is a labelled, multi-line textbox (CodeMirror's
 * contenteditable, which screen readers read as text); Tab indents, and Escape then Tab
 * (or Ctrl-M, CodeMirror's "tab focus mode") moves the focus on, as the hint beside each
 * editor says; Ctrl-Enter or Shift-Enter submits, as in Jupyter. Colours come from the
 * course stylesheet (CSS classes of @lezer/highlight's classHighlighter, .tok-*), so
 * both colour modes keep their contrast.
 */
import { EditorState } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightSpecialChars, drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { indentOnInput, bracketMatching, syntaxHighlighting, indentUnit } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";

/**
 * Replace `textarea` with an editor holding its text.
 *
 * options: attributes (for the editable element: aria-labelledby, aria-describedby,
 * data-answer ...), onSubmit() (Ctrl-Enter, Shift-Enter), onChange(text).
 * Returns {view, element, focus()}; `element` is the editable element, whose `value`
 * property reads and sets the code (like the textarea's).
 */
function create(textarea, options) {
  options = options || {};
  const submit = () => { if (options.onSubmit) { options.onSubmit(); } return true; };
  const view = new EditorView({
    parent: textarea.parentNode,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        syntaxHighlighting(classHighlighter),
        python(),
        keymap.of([
          { key: "Mod-Enter", run: submit },
          { key: "Shift-Enter", run: submit },
          indentWithTab,
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        EditorView.lineWrapping, // long lines wrap: the editor never scrolls sideways
        EditorView.contentAttributes.of(Object.assign({
          "aria-multiline": "true",
          tabindex: "0",
          spellcheck: "false",
          autocorrect: "off",
          autocapitalize: "off",
        }, options.attributes || {})),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && options.onChange) {
            options.onChange(update.state.doc.toString());
          }
        }),
      ],
    }),
  });
  textarea.parentNode.insertBefore(view.dom, textarea);
  textarea.hidden = true;
  textarea.removeAttribute("data-answer");
  const element = view.contentDOM;
  Object.defineProperty(element, "value", {
    configurable: true,
    get() { return view.state.doc.toString(); },
    set(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: String(text) } });
    },
  });
  return { view, element, focus() { view.focus(); } };
}

window.GLCodeEditor = { create, version: "codemirror 6" };
