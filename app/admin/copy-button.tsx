// A button that copies a value the merchant must paste elsewhere (the notification URL,
// a new device key), and says so once it did.
import { Button } from "@shopify/polaris";
import { useState } from "react";

export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      accessibilityLabel={`${label}: ${value}`}
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      }}
    >
      {copied ? "Copied" : label}
    </Button>
  );
}
