"""Where the app's live runs execute: worker processes (local pool or Ray) behind a fair queue."""
