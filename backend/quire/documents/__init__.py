"""Documents: reading text out of uploaded files and storing files safely."""
