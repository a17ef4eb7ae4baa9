// The admin's usual card: a heading, then its content stacked with a gap.
import { BlockStack, Card, Text, type BlockStackProps } from "@shopify/polaris";
import type { ReactNode } from "react";

export function TitledCard({ title, gap = "200", children }: { title: ReactNode; gap?: BlockStackProps["gap"]; children: ReactNode }) {
  return (
    <Card>
      <BlockStack gap={gap}>
        <Text as="h2" variant="headingMd">
          {title}
        </Text>
        {children}
      </BlockStack>
    </Card>
  );
}
