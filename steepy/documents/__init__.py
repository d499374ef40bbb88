"""Documents: reading workflows, services and macros from files (with line and column),
expanding macros, and checking what the schemas cannot."""
