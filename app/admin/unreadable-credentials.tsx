// Credentials stored under an encryption key the app no longer holds: said on every admin page
// that shows the connection, with the way out (connecting the device again on the connection page).
import { Banner, Layout } from "@shopify/polaris";

export interface UnreadableEnvironment {
  env: string;
  label: string;
  unreadable: boolean;
}

export function UnreadableCredentials({ environments, connectUrl }: { environments: UnreadableEnvironment[]; connectUrl?: string }) {
  const unreadable = environments.filter((e) => e.unreadable);
  if (unreadable.length === 0) return null;
  return (
    <Layout.Section>
      {unreadable.map((e) => (
        <Banner
          key={e.env}
          tone="critical"
          title={`${e.label}: the stored credentials cannot be read`}
          {...(connectUrl ? { action: { content: "Connect the device again", url: connectUrl } } : {})}
        >
          The device key and Secret Key were stored with an encryption key the app no longer has, so payments on this gateway can neither be taken nor followed up. Connect the device again
          {connectUrl ? "." : " below."}
        </Banner>
      ))}
    </Layout.Section>
  );
}
