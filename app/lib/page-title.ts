// The document titles of the app's pages (WCAG 2.4.2), which a browser tab or a screen reader
// says first. In Shopify's admin, App Bridge's title bar takes its title from the embedded
// page's document title when the page sets none, beside the app's name: an admin page's title
// is its name alone.

/** The app's name: the admin home's title, and the title of a page that has none of its own. */
export const APP_NAME = "Crypto checkout";

/** An admin page's `meta`: its name alone. */
export const adminPageTitle = (page: string) => [{ title: page }];

/** The `meta` of a page outside the admin (the login page): what it is, then the app's name; the app's name alone by default. */
export const pageTitle = (page?: string) => [{ title: page === undefined ? APP_NAME : `${page} · ${APP_NAME}` }];
