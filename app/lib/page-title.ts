// The document titles of the app's pages (WCAG 2.4.2): what the page is, then the app's name,
// which a browser tab or a screen reader says first.

/** The app's name, as the title of a page that has none of its own. */
export const APP_NAME = "Crypto checkout";

/** A route's `meta`: the page's title, or the app's name alone. */
export const pageTitle = (page?: string) => [{ title: page === undefined ? APP_NAME : `${page} · ${APP_NAME}` }];
