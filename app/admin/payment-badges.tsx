// A payment's badges wherever payments are listed: its state, whether Shopify holds another
// outcome (a second payment of a checkout, rejected there), whether it needs attention, and test.
import { Badge, InlineStack } from "@shopify/polaris";
import type { PaymentRow } from "./payments.server";

export function PaymentBadges({ payment }: { payment: Pick<PaymentRow, "stateLabel" | "stateTone" | "notPaidInShopify" | "needsAttention" | "test"> }) {
  return (
    <InlineStack gap="100">
      <Badge tone={payment.stateTone}>{payment.stateLabel}</Badge>
      {payment.notPaidInShopify ? <Badge tone="warning">Not paid in Shopify</Badge> : null}
      {payment.needsAttention ? <Badge tone="critical">Needs attention</Badge> : null}
      {payment.test ? <Badge>Test</Badge> : null}
    </InlineStack>
  );
}
