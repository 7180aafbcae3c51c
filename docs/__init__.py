"""piko's user documentation, shipped inside the package so that the default system prompt can
point the model at it wherever piko is installed (a wheel has no repository beside it)."""
