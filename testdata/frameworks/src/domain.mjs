// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0
//
// The shared fictional domain of every sample: the customer-support desk of
// "Acme Shop" with a triage agent and a refund agent. Facts (order ids,
// amounts, refund ids) are fixed so that evaluators and golden tests have
// something concrete to check.

/** Model id reported by every scripted model (lets cost tables price the samples). */
export const MODEL_ID = "gpt-4o-mini";

export const ORDERS = {
  12345: {
    order_id: "12345",
    status: "delivered",
    item: "Ceramic mug set (4 pcs)",
    total: 49.99,
    currency: "USD",
    delivered_on: "2026-11-02",
  },
  123: {
    order_id: "123",
    status: "delivered",
    item: "USB-C cable, 2 m",
    total: 19.5,
    currency: "USD",
    delivered_on: "2026-10-28",
  },
};

const REFUND_IDS = { 12345: "RF-1001", 123: "RF-1002" };

export const TRIAGE_INSTRUCTIONS =
  "You are the triage agent of Acme Shop customer support. Look up the customer's order with " +
  "lookup_order, then hand refund requests over to the refund agent. You cannot issue refunds yourself.";
export const REFUND_INSTRUCTIONS =
  "You are the refund agent of Acme Shop. Issue refunds with issue_refund for the full order total " +
  "(order_id and amount in USD are required) and confirm the refund id to the customer.";

export const LOOKUP_ORDER_DESCRIPTION = "Look up an order by its number and return its status, item and total.";
export const ISSUE_REFUND_DESCRIPTION = "Issue a refund for an order. Requires the order id and the amount in USD.";
export const ORDER_ID_DESCRIPTION = "The order number, digits only, e.g. 12345";
export const AMOUNT_DESCRIPTION = "Refund amount in USD";

/** lookup_order tool body. */
export function lookupOrder({ order_id }) {
  const o = ORDERS[order_id];
  return o ? { ...o } : { error: `order ${order_id} not found` };
}

/** issue_refund tool body. */
export function issueRefund({ order_id, amount }) {
  const o = ORDERS[order_id];
  if (!o) return { error: `order ${order_id} not found` };
  return {
    refund_id: REFUND_IDS[order_id],
    order_id,
    amount,
    currency: "USD",
    status: "approved",
  };
}

/** User messages. */
export const USER = {
  damaged: "Hi, my order #12345 (the ceramic mug set) arrived broken. I'd like a refund of the $49.99 I paid.",
  t1: "Hi, I'd like a refund for the USB-C cable I bought, order #123. It stopped working after a week.",
  t2: "No, I meant order #123, not #12345. The cable, not the mugs.",
  t3: "Great, thanks. That's all.",
};

/** Assistant texts reused by the scripts. */
export const SAY = {
  refund12345: "Refund RF-1001 of $49.99 for order 12345 has been approved. It will reach your card in 3-5 business days.",
  refund123: "Sorry for the mix-up. Refund RF-1002 of $19.50 for order 123 (USB-C cable) has been approved.",
  bye: "You're welcome! Have a nice day.",
  handoffRequest12345:
    "Customer reports order 12345 (Ceramic mug set, $49.99) arrived damaged and wants a full refund.",
  handoffRequest12345Wrong: "Customer wants a refund for order 12345 (Ceramic mug set, $49.99).",
  handoffRequest123: "Customer wants a refund for order 123 (USB-C cable, $19.50); it stopped working.",
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Rough token count used for the scripted usage figures (about 4 characters per token). */
export const tokens = (s) => Math.max(1, Math.ceil(String(s).length / 4));
