"""slotmem for other ecosystems, each imported only when asked for:
``slotmem.integrations.langgraph`` (LangGraph's BaseStore; pip install 'slotmem[langgraph]')."""
