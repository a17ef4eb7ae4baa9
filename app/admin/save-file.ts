// Has the browser save a blob as a file of the given name: through a link in the page, whose
// object URL is kept for a minute, since a browser may still be reading it after the click
// returns (revoked at once, some browsers save nothing, or an empty file).
export function saveAsFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
