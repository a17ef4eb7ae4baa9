// The outcome of a page's last action (a check, a save): a banner section above the page's content.
import { Banner, Layout } from "@shopify/polaris";

export function ResultBanner({ result }: { result: { ok: boolean; message: string } | undefined }) {
  if (!result) return null;
  return (
    <Layout.Section>
      <Banner tone={result.ok ? "success" : "critical"} title={result.message} />
    </Layout.Section>
  );
}
