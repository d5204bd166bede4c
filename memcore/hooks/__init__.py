"""Webhooks: audit entries become events (dispatch.py), events are posted, signed, in
order per memory (delivery.py). docs/design.md, Webhooks."""
