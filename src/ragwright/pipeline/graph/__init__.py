"""The entity graph's flows: extraction into the store, communities and their reports, and the
views `Index` shows of them."""
