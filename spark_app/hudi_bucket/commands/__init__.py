"""The job commands, one module each (show, plan and apply, verify, write, rollback): thin steps over the
mechanisms below them, never importing one another."""
