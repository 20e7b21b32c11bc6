1 |user age:0.25 paris |item book price:12.5
-1 2 'second|user age:0.5 london |item pen
1 0.5 |user:2 age:0.1 paris
-1 |item book book
