"""Notebook widgets: the runtime's Bokeh views (runtime.views) inside ipywidgets, kept live by one
updater thread per kernel."""
