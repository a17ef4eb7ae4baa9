// The outcome of a page's last action (a check, a save): a banner section above the page's content.
import { Banner, Layout, type BannerHandles } from "@shopify/polaris";
import { useEffect, useRef } from "react";

/**
 * `takeFocus`: where the action's control leaves the page with it (a card handled and gone),
 * focus moves to the outcome, so a keyboard or screen reader user goes on from there instead
 * of from the top of the document.
 */
export function ResultBanner({
  result,
  takeFocus = false,
  failureTone = "critical",
}: {
  /** `warning`: done, with something the merchant must act on. */
  result: { ok: boolean; message: string; warning?: boolean } | undefined;
  takeFocus?: boolean;
  failureTone?: "critical" | "warning";
}) {
  const banner = useRef<BannerHandles>(null);
  useEffect(() => {
    if (takeFocus && result) banner.current?.focus();
  }, [takeFocus, result]);
  if (!result) return null;
  return (
    <Layout.Section>
      <Banner ref={banner} tone={result.ok ? (result.warning ? "warning" : "success") : failureTone} title={result.message} />
    </Layout.Section>
  );
}
