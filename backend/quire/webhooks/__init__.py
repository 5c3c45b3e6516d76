"""Signed webhooks: a POST to a job's (or its account's) callback URL when the job or its batch ends."""
