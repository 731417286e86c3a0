"""Jobs: the work done on level files (assembly, the nightly, designer edits, reports and pictures,
publishing). They use every layer below them; the front ends (`cli`, `studio`) use them."""
