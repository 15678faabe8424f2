/** Where a reader goes next: every page (home, docs, league, treasury) names these. */
export const SITE_LINKS = [
  { href: "/docs", text: "API reference" },
  { href: "/api/v1/openapi.json", text: "OpenAPI document" },
  { href: "/llms.txt", text: "llms.txt" },
  { href: "/league", text: "League" },
  { href: "/treasury", text: "Treasury record" },
] as const;

/** The links as a nav landmark, fixed markup (nothing in it comes from a request or a user). */
export const SITE_NAV = `<nav aria-label="Site"><a href="/">Home</a>${SITE_LINKS.map(
  (l) => ` · <a href="${l.href}">${l.text}</a>`,
).join("")}</nav>`;
