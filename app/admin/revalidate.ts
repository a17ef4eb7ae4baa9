// When an admin page reads its data again after one of its forms is answered.
import type { ShouldRevalidateFunction } from "@remix-run/react";

/**
 * After a refusal because what the page showed changed meanwhile (409: another tab, another
 * request), the page's data is read again, so that the page shows what the refusal speaks of;
 * otherwise as Remix decides (a refusal's 4xx is not revalidated by default).
 */
export const revalidateAfterConflict: ShouldRevalidateFunction = ({ actionStatus, defaultShouldRevalidate }) => (actionStatus === 409 ? true : defaultShouldRevalidate);
