// Small text helpers shared by the app's words for merchants.

/** Whether the text already ends a sentence (with ".", "!" or "?"). */
export function endsSentence(text: string): boolean {
  return /[.!?]$/.test(text);
}

/** The text as a sentence: ending with "." unless it already ends one. */
export function asSentence(text: string): string {
  return endsSentence(text) ? text : `${text}.`;
}
