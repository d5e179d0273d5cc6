"""The watch side: the roots watched for changes (``watcher.py``) and what a change made
behind the agent's back means for the sessions' records (``external.py``)."""
