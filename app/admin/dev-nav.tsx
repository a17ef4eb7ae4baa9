// The admin's navigation when it runs outside Shopify (development login): App Bridge's
// navigation menu lives in Shopify's admin, so a plain bar of links stands in for it.
import { NavLink } from "@remix-run/react";

export const ADMIN_PAGES = [
  { to: "/app", label: "Home", end: true },
  { to: "/app/onboarding", label: "Connection", end: false },
  { to: "/app/settings", label: "Settings", end: false },
  { to: "/app/payments", label: "Payments", end: false },
  { to: "/app/attention", label: "Needs attention", end: false },
  { to: "/app/data-requests", label: "Data requests", end: false },
  { to: "/app/health", label: "Health", end: false },
] as const;

const barStyle = { display: "flex", flexWrap: "wrap", gap: "4px 16px", alignItems: "center", padding: "10px 20px", background: "#1a1a1a", color: "#fff" } as const;

export function DevNav({ shopDomain }: { shopDomain: string }) {
  return (
    <nav aria-label="App pages" style={barStyle}>
      <strong style={{ marginRight: 8 }}>Crypto checkout</strong>
      {ADMIN_PAGES.map((page) => (
        <NavLink
          key={page.to}
          to={page.to}
          end={page.end}
          prefetch="intent"
          style={({ isActive }) => ({ color: "#fff", textDecoration: isActive ? "underline" : "none", fontWeight: isActive ? 650 : 450, padding: "6px 0" })}
        >
          {page.label}
        </NavLink>
      ))}
      <span style={{ marginLeft: "auto", opacity: 0.8, fontSize: 13 }}>Development login · {shopDomain}</span>
    </nav>
  );
}
