"""One module per page (or small group of pages), each with its `ROUTES`."""
