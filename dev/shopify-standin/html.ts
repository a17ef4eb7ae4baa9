// Server-side HTML for the stand-in's pages: an escaping template tag and the shared
// layout (readable on a phone, no scripts).

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | Interpolation[];

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** Every interpolated value is escaped unless it is already SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

const STYLES = `
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --accent: #008060; --bad: #b42318; --warn: #9a6700; --bg: #f6f6f7; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { background: #fff; border-bottom: 1px solid var(--line); padding: .75rem 1rem; }
header a { color: var(--ink); text-decoration: none; font-weight: 600; }
header small { color: var(--muted); margin-left: .5rem; }
main { max-width: 44rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; margin-bottom: 1rem; }
label { display: block; font-size: .9rem; color: var(--muted); margin-bottom: .75rem; }
input, select { display: block; width: 100%; margin-top: .25rem; padding: .55rem .6rem; font: inherit; color: var(--ink); border: 1px solid var(--line); border-radius: .375rem; background: #fff; }
input[type=checkbox] { display: inline; width: auto; margin-right: .4rem; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 0 .75rem; }
@media (max-width: 30rem) { .row { grid-template-columns: 1fr; } }
button, .button { display: inline-block; padding: .65rem 1.1rem; font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: .375rem; cursor: pointer; text-decoration: none; }
.secondary { background: #fff; color: var(--ink); border: 1px solid var(--line); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: 1rem 0; }
.card > h2:first-child, .card > p:first-child { margin-top: 0; }
.status { display: inline-block; padding: .15rem .6rem; border-radius: 1rem; font-weight: 600; font-size: .9rem; }
summary { cursor: pointer; }
.status.ok { background: #d3f5e4; color: #0c5132; }
.status.bad { background: #fee4e2; color: var(--bad); }
.status.wait { background: #fff4d6; color: var(--warn); }
.error { border-color: var(--bad); }
.error h2 { color: var(--bad); margin-top: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); padding: .75rem; border-radius: .375rem; font-size: .85rem; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: .4rem 0; border-bottom: 1px solid var(--line); }
.muted { color: var(--muted); font-size: .9rem; }
form.inline { display: inline; }
`;

// The icon link is empty: the browser then asks for no /favicon.ico, which this server does not serve.
export function page(title: string, body: SafeHtml, options: { refreshSeconds?: number; status?: number } = {}): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
${options.refreshSeconds ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}">` : ""}
<title>${title} · Shopify stand-in</title>
<style>${new SafeHtml(STYLES)}</style>
</head>
<body>
<header><a href="/">Demo shop</a><small>local Shopify stand-in</small></header>
<main>
${body}
</main>
</body>
</html>`}`;
}
