"""The bundled eval fixtures (JSON files next to this one) and the reader that checks them."""
