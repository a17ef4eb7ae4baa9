// A destructive action asks first: a warning that says what is lost, with "Yes" (its form posts
// the fields given and confirm=yes, which the action requires) and "Cancel".
import { Form } from "@remix-run/react";
import { Banner, BlockStack, Button, InlineStack, type BannerHandles } from "@shopify/polaris";
import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * The question's state, for what it was asked about: `current` names the thing the trigger acts
 * on now (a request's id, the credentials' version), and the question stays open only while it
 * names the same one. Pressing the trigger moves focus to the question (its title and what is
 * lost are read first, and a held Enter cannot confirm), Cancel back to the trigger: a keyboard
 * or screen reader user goes on from where they acted. Focus moves only on those presses.
 */
export function useConfirmation(current: string | null) {
  const [askedFor, setAskedFor] = useState<string | null>(null);
  // A new object for each press, so that focus moves each time.
  const [focusTo, setFocusTo] = useState<{ target: "question" | "trigger" } | null>(null);
  const questionRef = useRef<BannerHandles>(null);
  const triggerRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focusTo?.target === "question") questionRef.current?.focus();
    else if (focusTo?.target === "trigger") triggerRef.current?.querySelector<HTMLElement>("button")?.focus();
  }, [focusTo]);
  const ask = (asking: boolean) => {
    setAskedFor(asking ? current : null);
    setFocusTo({ target: asking ? "question" : "trigger" });
  };
  return { open: current !== null && askedFor === current, askedFor, ask, questionRef, triggerRef };
}

export type Confirmation = ReturnType<typeof useConfirmation>;

/** The button that opens the question (its wrapper takes the focus back on Cancel). */
export function ConfirmTrigger({ confirmation, children }: { confirmation: Confirmation; children: string }) {
  const { triggerRef } = confirmation;
  return (
    <div ref={triggerRef}>
      <Button tone="critical" onClick={() => confirmation.ask(true)}>
        {children}
      </Button>
    </div>
  );
}

export function ConfirmQuestion({
  confirmation,
  title,
  fields,
  confirmLabel,
  busy,
  children,
}: {
  confirmation: Confirmation;
  title: string;
  /** Posted with confirm=yes. */
  fields: Record<string, string>;
  confirmLabel: string;
  busy: boolean;
  /** What is lost, said before the merchant confirms. */
  children: ReactNode;
}) {
  const { questionRef } = confirmation;
  return (
    <Banner ref={questionRef} tone="warning" title={title}>
      <BlockStack gap="200">
        {children}
        <Form method="post">
          {Object.entries(fields).map(([name, value]) => (
            <input key={name} type="hidden" name={name} value={value} />
          ))}
          <input type="hidden" name="confirm" value="yes" />
          <InlineStack gap="200">
            <Button submit tone="critical" variant="primary" loading={busy}>
              {confirmLabel}
            </Button>
            <Button onClick={() => confirmation.ask(false)}>Cancel</Button>
          </InlineStack>
        </Form>
      </BlockStack>
    </Banner>
  );
}
