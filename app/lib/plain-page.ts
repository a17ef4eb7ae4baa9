// The look of the app's few pages outside the admin and the shopper's payment page (the
// app's own URL, its error page): one readable column of system text.
import type { CSSProperties } from "react";

export const PLAIN_PAGE_STYLE: CSSProperties = { fontFamily: "system-ui, sans-serif", maxWidth: "40rem", margin: "0 auto", padding: "2rem 1.25rem", color: "#202223", lineHeight: 1.5 };
