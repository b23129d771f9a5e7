"""Live views of a cluster, shared by the notebook widgets and the JobManager's dashboard.

``model`` holds what the event stream has said (no Bokeh, no Jupyter); ``columns`` turns it into
plain column dicts; ``figures`` binds those columns to Bokeh figures; ``stream`` feeds a model from
a JobManager's ``/events`` WebSocket in a background thread.
"""
