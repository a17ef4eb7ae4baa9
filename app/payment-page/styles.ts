// The payment page's stylesheet: phone first, large touch targets, text contrast of at
// least 4.5:1 against its background, and a tag/memo warning nobody can miss. A value to
// copy has a line of its own, with its coin and Copy button below: an amount or a tag/memo
// never breaks (a wallet's field takes it whole), an address or invoice wraps anywhere.
export const PAYMENT_PAGE_CSS = `
.pp{--ink:#1f2124;--muted:#4a4f55;--line:#c9cccf;--accent:#1f5199;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#f4f5f6;min-height:100vh;margin:0;padding:16px 12px 40px;box-sizing:border-box;line-height:1.45}
.pp *{box-sizing:border-box}
.pp main{max-width:30rem;margin:0 auto;display:grid;gap:12px}
.pp .card{background:#fff;border:1px solid var(--line);border-radius:14px;padding:16px}
.pp h1{font-size:1.3rem;margin:0 0 4px}
.pp h2{font-size:1.05rem;margin:0 0 8px}
.pp .muted{color:var(--muted)}
.pp .big{font-size:1.6rem;font-weight:700;margin:2px 0 0}
.pp ul.coins{list-style:none;margin:0;padding:0;display:grid;gap:8px}
.pp ul.coins button{width:100%;min-height:52px;display:flex;justify-content:space-between;align-items:center;gap:8px;padding:10px 14px;border:1px solid var(--line);border-radius:10px;background:#fff;font:inherit;color:var(--ink);text-align:left;cursor:pointer}
.pp ul.coins button:hover,.pp ul.coins button:focus-visible{border-color:var(--accent);outline:2px solid var(--accent);outline-offset:1px}
.pp ul.coins button:disabled{opacity:.6;cursor:progress}
.pp .qr{display:flex;justify-content:center;margin:8px 0}
.pp .qr svg{width:min(240px,70vw);height:auto}
.pp .field{margin:12px 0 0}
.pp .label{display:block;font-size:.9rem;color:var(--muted);margin-bottom:4px}
.pp .copyrow{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:6px 0 0}
.pp code.value{display:block;white-space:nowrap;overflow-x:auto;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95rem;background:#f1f2f4;border-radius:8px;padding:10px}
.pp code.value.long{white-space:normal;overflow-wrap:anywhere}
.pp .unit{font-weight:600;white-space:nowrap}
.pp button.copy{margin-left:auto;min-width:76px;min-height:44px;border:1px solid var(--ink);border-radius:8px;background:#fff;color:var(--ink);font:inherit;cursor:pointer}
.pp .sr-only{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.pp .memo{margin:14px 0 0;border:3px solid #b3261e;background:#fff4f2;border-radius:12px;padding:12px}
.pp .memo .copyrow{margin:4px 0 8px}
.pp .memo strong.value{display:block;white-space:nowrap;overflow-x:auto;font-size:1.5rem;letter-spacing:.04em}
.pp .memo p{margin:0 0 8px;color:#5f1410;font-weight:600}
.pp .error{border:2px solid #b3261e;background:#fff4f2;color:#5f1410;border-radius:10px;padding:10px 12px}
.pp .status{font-weight:600;margin:0}
.pp .countdown{font-size:1.4rem;font-variant-numeric:tabular-nums;font-weight:700}
.pp a.button,.pp button.button{display:inline-block;min-height:44px;padding:11px 16px;border:0;border-radius:10px;background:var(--ink);color:#fff;font:inherit;text-decoration:none;font-weight:600;cursor:pointer}
.pp a.secondary{color:var(--accent);text-decoration:underline;display:inline-block;padding:10px 0;min-height:44px}
.pp footer{text-align:center}
`;
