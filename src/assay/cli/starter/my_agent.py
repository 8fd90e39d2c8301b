"""Your agent: assay calls it once per turn with the conversation so far and the tools
the suite gives it (none here). Return a string, or {"text": ..., "tool_calls": [...]}.
It can be a function like this one (sync or async), or a class with
``respond(self, conversation, tools)``. Replace the body with a call to your system.

    assay run evals --agent python:my_agent:agent     (from this folder)
"""

FAQ = {
    "hours": "We are open 9am to 6pm, Monday to Saturday.",
    "return": "You can return an item within 30 days of delivery for a full refund.",
    "shipping": "Shipping is free on orders over $50; otherwise it costs $4.99.",
}


def agent(conversation, tools):
    question = conversation[-1].content.lower()  # the user's last message
    for topic, answer in FAQ.items():
        if topic in question:
            return answer
    return "I'm sorry, I don't know. Could you ask about our hours, returns or shipping?"
