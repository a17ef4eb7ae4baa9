// The stand-in's cost limit, Shopify's leaky bucket: it pays for calls while it holds their
// cost, refuses the next one (which costs nothing), and fills again at its restore rate up to
// its size, reporting what it holds after each call.
import { describe, expect, it } from "vitest";
import { CostBucket } from "../../dev/shopify-standin/cost-bucket";

describe("the stand-in's cost bucket", () => {
  it("pays while it holds the cost, refuses for nothing, and fills again at its rate up to its size", () => {
    let nowMs = 1_000_000;
    const bucket = new CostBucket({ maximumAvailable: 30, restoreRate: 20 }, () => nowMs);
    expect(bucket.take(10)).toEqual({ paid: true, status: { maximumAvailable: 30, restoreRate: 20, currentlyAvailable: 20 } });
    expect(bucket.take(10).paid).toBe(true);
    expect(bucket.take(10).paid).toBe(true);
    // Empty: refused, and the refusal costs nothing.
    expect(bucket.take(10)).toEqual({ paid: false, status: { maximumAvailable: 30, restoreRate: 20, currentlyAvailable: 0 } });
    nowMs += 250; // 5 points back
    expect(bucket.take(10)).toMatchObject({ paid: false, status: { currentlyAvailable: 5 } });
    nowMs += 250; // 10 points
    expect(bucket.take(10)).toMatchObject({ paid: true, status: { currentlyAvailable: 0 } });
    // A long quiet fills it to its size, no further.
    nowMs += 60_000;
    expect(bucket.take(10)).toMatchObject({ paid: true, status: { currentlyAvailable: 20 } });
  });
});
