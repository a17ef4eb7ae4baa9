// The app's icon (browsers ask for /favicon.ico on every page).
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#1a1a1a"/><path d="M12 9h6.5a4 4 0 0 1 0 8H12zm0 8h7.5a4 4 0 0 1 0 8H12zM14 6v3m4-3v3m-4 16v3m4-3v3" stroke="#f7931a" stroke-width="2.4" fill="none"/></svg>`;

export function loader() {
  return new Response(ICON, { headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" } });
}
